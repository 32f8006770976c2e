-- wrk: an HTTP worker pool. Each request is either a batch claim of MAX
-- jobs or a batch complete of the leases the thread's last claims
-- returned (any connection may complete any lease). Jobs done are counted
-- by the daemon (/metrics), not here.
local max = tonumber(os.getenv("MAX") or "100")
local pending = {}
local claim = wrk.format("POST", "/v1/queues/bench/claim",
  { ["Content-Type"] = "application/json" },
  '{"worker": "wrk", "max": ' .. max .. ', "waitMs": 1000}')

function request()
  if #pending > 0 then
    -- At most 1,000 leases a request (the API's batch bound).
    local take = {}
    for i = 1, math.min(#pending, 1000) do take[i] = table.remove(pending) end
    local batch = table.concat(take, ",")
    return wrk.format("POST", "/v1/jobs/complete",
      { ["Content-Type"] = "application/json" }, '{"jobs": [' .. batch .. ']}')
  end
  return claim
end

function response(status, headers, body)
  if status ~= 200 then
    io.stderr:write("worker: HTTP " .. status .. " " .. body:sub(1, 300) .. "\n")
    wrk.thread:stop()
    return
  end
  -- A claim's reply: {"jobs":[{"job":1,..."token":7,...},...]}.
  for job, token in body:gmatch('"job":(%d+),.-"token":(%d+)') do
    pending[#pending + 1] = '{"job": ' .. job .. ', "token": ' .. token .. '}'
  end
end
