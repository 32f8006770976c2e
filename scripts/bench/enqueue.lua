-- wrk: one single-job enqueue per request (POST /v1/queues/bench/jobs).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"payload": {"n": 1}}'

function response(status, headers, body)
  if status ~= 200 then
    io.stderr:write("enqueue: HTTP " .. status .. " " .. body .. "\n")
    wrk.thread:stop()
  end
end
