-- wrk: a batch of BATCH jobs per request (POST /v1/queues/bench/jobs with
-- {"jobs": [...]}); jobs/s = requests/s × BATCH.
local n = tonumber(os.getenv("BATCH") or "500")
local items = {}
for i = 1, n do items[i] = '{"payload": {"n": ' .. i .. '}}' end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"jobs": [' .. table.concat(items, ",") .. ']}'

function response(status, headers, body)
  if status ~= 200 then
    io.stderr:write("batch: HTTP " .. status .. " " .. body:sub(1, 300) .. "\n")
    wrk.thread:stop()
  end
end
