//! The Lua scripts of the Redis transport: each verb is one script, so it
//! is atomic on the server and reads the server's clock (`TIME`, the
//! lease clock shared by every chime process on this Redis). Scripts
//! only store what Rust decided with core's rules (the retry delay, dead
//! or dropped); they check tokens and states, and keep the stream, the
//! sorted sets and the job hash in step.
//!
//! Keys (per queue, `S` = its stream): `S` (work stream, consumer group
//! `G`), `S:delayed` (job ids by run-at), `S:claimed` (by lease deadline),
//! `S:done` (finished, by finish time: retention), `S:deadset` (dead, by
//! death time), `S:available` (the jobs waiting in the work stream, by
//! job id: the index maintenance scans for entries another consumer
//! deleted, its cursor in `S:availscan`), the dead-letter stream `D`, and
//! per job `P job:<id>` (a hash), `P` the transport's key prefix.
//! `S:available` is computed from the stream's name inside the scripts
//! (as job keys are): the one place that adds to it is `xadd_job`. Sorted-set members are job ids
//! zero-padded to 20 digits, so ties order by id. Job hash fields: `q`
//! queue, `body` canonical message, `hdrs` broker headers (`name: value`
//! lines), `fire`, `key`, `idk` (its idempotency key), `st` state, `att`
//! attempts started, `max` attempts override, `run`, `tok`, `dl`, `wk`,
//! `started`, `fin`, `err`, `ent` (its work-stream entry), `dent` (its
//! dead-letter entry).
//!
//! Replies are flat arrays of strings (no nils), parsed in `mod.rs`.

/// Helpers prepended to every script.
const PRELUDE: &str = r#"
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function pad(id) return string.format('%020d', tonumber(id)) end
-- The index of jobs waiting in `stream` (state `available`): every job
-- with an entry it has not been handed out by is in it, so maintenance
-- finds the entries another consumer deleted without walking every job.
local function avail(stream) return stream .. ':available' end
local function xadd_job(stream, jk, id)
  local h = redis.call('HMGET', jk, 'body', 'hdrs')
  local args = {stream, '*', 'job', tostring(id), 'body', h[1]}
  for name, value in string.gmatch(h[2] or '', '([^\n]-): ([^\n]*)\n') do
    args[#args + 1] = name
    args[#args + 1] = value
  end
  local ent = redis.call('XADD', unpack(args))
  redis.call('HSET', jk, 'st', 'available', 'ent', ent)
  redis.call('ZADD', avail(stream), tonumber(id), pad(id))
  return ent
end
-- Due retries (and delayed enqueues) into the work stream, oldest run-at
-- first: called before every XADD and claim, so the stream's order is
-- core's claim order (run-at, then id) for jobs of one priority.
local function promote(stream, delayed, jp, now)
  local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 256)
  for _, m in ipairs(due) do
    redis.call('ZREM', delayed, m)
    local jk = jp .. tonumber(m)
    if redis.call('HGET', jk, 'st') == 'scheduled' then
      xadd_job(stream, jk, tonumber(m))
    end
  end
end
-- Finished jobs beyond retention (older than ms, beyond max) forgotten.
local function prune(done, jp, now, max, ms)
  local old = redis.call('ZRANGEBYSCORE', done, '-inf', '(' .. (now - ms), 'LIMIT', 0, 256)
  for _, m in ipairs(old) do
    redis.call('ZREM', done, m)
    redis.call('DEL', jp .. tonumber(m))
  end
  local extra = redis.call('ZCARD', done) - max
  if extra > 0 then
    local gone = redis.call('ZPOPMIN', done, extra)
    for i = 1, #gone, 2 do redis.call('DEL', jp .. tonumber(gone[i])) end
  end
end
-- The job's key is remembered for the dedup window after it finished.
local function key_window(jk, id, dedup)
  local idk = redis.call('HGET', jk, 'idk')
  if idk and idk ~= '' and redis.call('GET', idk) == tostring(id) then
    redis.call('PEXPIRE', idk, math.max(1, dedup))
  end
end
-- A finished (not dead) job: completed, dropped or cancelled.
local function finish(jk, id, st, now, err, done, jp, dedup, rmax, rms)
  redis.call('HSET', jk, 'st', st, 'fin', now, 'ent', '')
  if err ~= '' then redis.call('HSET', jk, 'err', err) end
  redis.call('HDEL', jk, 'tok', 'dl', 'wk')
  redis.call('ZADD', done, now, pad(id))
  key_window(jk, id, dedup)
  prune(done, jp, now, rmax, rms)
end
"#;

/// `enqueue`: KEYS stream, delayed, idk (or any key when `ARGV[10]` is 0).
/// ARGV: job prefix, job counter, queue, body, headers, user key, run-at
/// (0: now), idk ttl ms (0: none), attempts override (''), has idk, job id
/// (0: take one), fire, delay ms (0: none). Reply: job id, deduplicated
/// (0/1), now.
pub const ENQUEUE: &str = r#"
local now = now_ms()
promote(KEYS[1], KEYS[2], ARGV[1], now)
if ARGV[10] == '1' then
  local ex = redis.call('GET', KEYS[3])
  if ex then return {tostring(ex), '1', tostring(now)} end
end
local id = tonumber(ARGV[11])
if id == 0 then id = redis.call('INCR', ARGV[2]) end
local jk = ARGV[1] .. id
local run = tonumber(ARGV[7])
if tonumber(ARGV[13]) > 0 then run = now + tonumber(ARGV[13]) end
if run < now then run = now end
local idk = ''
if ARGV[10] == '1' then idk = KEYS[3] end
redis.call('HSET', jk, 'q', ARGV[3], 'body', ARGV[4], 'hdrs', ARGV[5], 'key', ARGV[6],
  'idk', idk, 'att', 0, 'max', ARGV[9], 'run', run, 'st', 'scheduled', 'fire', ARGV[12],
  'enq', now)
if idk ~= '' then
  if tonumber(ARGV[8]) > 0 then
    redis.call('SET', idk, id, 'PX', ARGV[8])
  else
    redis.call('SET', idk, id)
  end
end
if run > now then
  redis.call('ZADD', KEYS[2], run, pad(id))
else
  xadd_job(KEYS[1], jk, id)
end
return {tostring(id), '0', tostring(now)}
"#;

/// `claim`: KEYS stream, delayed, claimed. ARGV: job prefix, token
/// counter, group, consumer, max, lease ms, worker, job counter, queue.
/// Reply: per job id, token, deadline, attempt, body, fire.
pub const CLAIM: &str = r#"
local now = now_ms()
promote(KEYS[1], KEYS[2], ARGV[1], now)
local out = {}
local want = tonumber(ARGV[5])
local got = 0
for round = 1, 8 do
  if got >= want then break end
  local r = redis.call('XREADGROUP', 'GROUP', ARGV[3], ARGV[4], 'COUNT', want - got,
    'STREAMS', KEYS[1], '>')
  if not r then break end
  local entries = r[1][2]
  if #entries == 0 then break end
  for _, e in ipairs(entries) do
    local ent, f = e[1], e[2]
    local fields = {}
    for i = 1, #f, 2 do fields[f[i]] = f[i + 1] end
    local id = tonumber(fields['job'] or '')
    local jk = nil
    if id == nil then
      -- Published by another program in the documented format: adopted.
      if fields['body'] then
        id = redis.call('INCR', ARGV[8])
        jk = ARGV[1] .. id
        redis.call('HSET', jk, 'q', ARGV[9], 'body', fields['body'], 'hdrs', '', 'key', '',
          'idk', '', 'att', 0, 'max', '', 'run', now, 'st', 'available', 'ent', ent,
          'fire', fields['runId'] or '', 'enq', now)
      else
        redis.call('XACK', KEYS[1], ARGV[3], ent)
        redis.call('XDEL', KEYS[1], ent)
      end
    else
      jk = ARGV[1] .. id
    end
    if jk then
      local h = redis.call('HMGET', jk, 'st', 'ent')
      if h[1] ~= 'available' or h[2] ~= ent then
        -- A stale entry (the job was cancelled, or moved on).
        redis.call('XACK', KEYS[1], ARGV[3], ent)
        redis.call('XDEL', KEYS[1], ent)
      else
        local tok = redis.call('INCR', ARGV[2])
        local dl = now + tonumber(ARGV[6])
        local att = redis.call('HINCRBY', jk, 'att', 1)
        redis.call('HSET', jk, 'st', 'claimed', 'tok', tok, 'dl', dl, 'wk', ARGV[7], 'started', now)
        redis.call('ZADD', KEYS[3], dl, pad(id))
        redis.call('ZREM', avail(KEYS[1]), pad(id))
        local b = redis.call('HMGET', jk, 'body', 'fire')
        for _, v in ipairs({tostring(id), tostring(tok), tostring(dl), tostring(att), b[1], b[2] or ''}) do
          out[#out + 1] = v
        end
        got = got + 1
      end
    end
  end
end
return out
"#;

/// `heartbeat`: KEYS claimed. ARGV: job key, job id, token, lease ms.
/// Reply: `ok` and the deadline, or an error code.
pub const HEARTBEAT: &str = r#"
local now = now_ms()
if redis.call('EXISTS', ARGV[1]) == 0 then return {'unknown_job'} end
local h = redis.call('HMGET', ARGV[1], 'st', 'tok', 'dl')
if h[1] ~= 'claimed' or h[2] ~= ARGV[3] or tonumber(h[3]) <= now then return {'lease_lost'} end
local dl = now + tonumber(ARGV[4])
redis.call('HSET', ARGV[1], 'dl', dl)
redis.call('ZADD', KEYS[1], dl, pad(ARGV[2]))
return {'ok', tostring(dl)}
"#;

/// `settle`: the end of an attempt. KEYS stream, claimed, done, deadset,
/// delayed, dead stream. ARGV: job key, job id, token, mode (`live`: the
/// lease must run; `expired`: it must have ended), action (`complete`,
/// `retry`, `dead`, `drop`), delay ms, retry-at (0: none), error, group,
/// dedup ms, dead bound, retention max, retention ms, job prefix, then the
/// dead letter's header pairs. Reply: `ok`, now, run-at (retry) or '',
/// fire; or an error code.
pub const SETTLE: &str = r#"
local now = now_ms()
local jk, id = ARGV[1], tonumber(ARGV[2])
if redis.call('EXISTS', jk) == 0 then return {'unknown_job'} end
local h = redis.call('HMGET', jk, 'st', 'tok', 'dl', 'ent', 'fire')
if h[1] ~= 'claimed' or h[2] ~= ARGV[3] then return {'lease_lost'} end
local dl = tonumber(h[3])
if ARGV[4] == 'live' and dl <= now then return {'lease_lost'} end
if ARGV[4] == 'expired' and dl > now then return {'not_expired'} end
if h[4] and h[4] ~= '' then
  redis.call('XACK', KEYS[1], ARGV[9], h[4])
  redis.call('XDEL', KEYS[1], h[4])
end
local m = pad(id)
redis.call('ZREM', KEYS[2], m)
local fire = h[5] or ''
local action = ARGV[5]
if action == 'retry' then
  local run = now + tonumber(ARGV[6])
  local ra = tonumber(ARGV[7])
  if ra > 0 then run = math.max(ra, now) end
  redis.call('HSET', jk, 'st', 'scheduled', 'run', run, 'err', ARGV[8], 'ent', '')
  redis.call('HDEL', jk, 'tok', 'dl', 'wk')
  if run <= now then
    promote(KEYS[1], KEYS[5], ARGV[14], now)
    xadd_job(KEYS[1], jk, id)
  else
    redis.call('ZADD', KEYS[5], run, m)
  end
  return {'ok', tostring(now), tostring(run), fire}
end
local dedup, bound = tonumber(ARGV[10]), tonumber(ARGV[11])
local rmax, rms = tonumber(ARGV[12]), tonumber(ARGV[13])
if action == 'dead' then
  local args = {KEYS[6], '*', 'job', tostring(id), 'body', redis.call('HGET', jk, 'body')}
  for i = 15, #ARGV do args[#args + 1] = ARGV[i] end
  local dent = redis.call('XADD', unpack(args))
  redis.call('HSET', jk, 'st', 'dead', 'fin', now, 'err', ARGV[8], 'ent', '', 'dent', dent)
  redis.call('HDEL', jk, 'tok', 'dl', 'wk')
  redis.call('ZADD', KEYS[4], now, m)
  key_window(jk, id, dedup)
  -- The dead-letter bound: the oldest dead letters are dropped.
  local extra = redis.call('ZCARD', KEYS[4]) - bound
  if extra > 0 then
    local gone = redis.call('ZPOPMIN', KEYS[4], extra)
    for i = 1, #gone, 2 do
      local ok = ARGV[14] .. tonumber(gone[i])
      local d = redis.call('HGET', ok, 'dent')
      if d and d ~= '' then redis.call('XDEL', KEYS[6], d) end
      redis.call('HSET', ok, 'dent', '')
      finish(ok, tonumber(gone[i]), 'dropped', now, '', KEYS[3], ARGV[14], dedup, rmax, rms)
    end
  end
  return {'ok', tostring(now), '', fire}
end
local st = 'completed'
if action == 'drop' then st = 'dropped' end
finish(jk, id, st, now, ARGV[8], KEYS[3], ARGV[14], dedup, rmax, rms)
return {'ok', tostring(now), '', fire}
"#;

/// `cancel`: KEYS stream, claimed, done, delayed. ARGV: job key, job id,
/// group, dedup ms, retention max, retention ms, job prefix. Reply: `ok`
/// and the fire, or an error code.
pub const CANCEL: &str = r#"
local now = now_ms()
local jk, id = ARGV[1], tonumber(ARGV[2])
if redis.call('EXISTS', jk) == 0 then return {'unknown_job'} end
local h = redis.call('HMGET', jk, 'st', 'ent', 'fire')
local st = h[1]
if st ~= 'available' and st ~= 'scheduled' and st ~= 'claimed' then return {'invalid_state', st} end
if h[2] and h[2] ~= '' then
  redis.call('XACK', KEYS[1], ARGV[3], h[2])
  redis.call('XDEL', KEYS[1], h[2])
end
redis.call('ZREM', KEYS[2], pad(id))
redis.call('ZREM', KEYS[4], pad(id))
redis.call('ZREM', avail(KEYS[1]), pad(id))
finish(jk, id, 'cancelled', now, '', KEYS[3], ARGV[7], tonumber(ARGV[4]), tonumber(ARGV[5]),
  tonumber(ARGV[6]))
return {'ok', h[3] or ''}
"#;

/// `redrive`: KEYS stream, deadset, dead stream, delayed. ARGV: job
/// prefix, one job id (''), its queue name. Reply: `ok`, count, keys
/// dropped; or an error code.
pub const REDRIVE: &str = r#"
local now = now_ms()
local ids
if ARGV[2] ~= '' then
  local jk = ARGV[1] .. ARGV[2]
  if redis.call('EXISTS', jk) == 0 or redis.call('HGET', jk, 'q') ~= ARGV[3] then
    return {'unknown_job'}
  end
  local st = redis.call('HGET', jk, 'st')
  if st ~= 'dead' then return {'invalid_state', st} end
  ids = {pad(ARGV[2])}
else
  ids = redis.call('ZRANGE', KEYS[2], 0, -1)
end
promote(KEYS[1], KEYS[4], ARGV[1], now)
local count, dropped = 0, 0
for _, m in ipairs(ids) do
  local id = tonumber(m)
  local jk = ARGV[1] .. id
  redis.call('ZREM', KEYS[2], m)
  local h = redis.call('HMGET', jk, 'dent', 'idk')
  if h[1] and h[1] ~= '' then redis.call('XDEL', KEYS[3], h[1]) end
  if h[2] and h[2] ~= '' then
    local holder = redis.call('GET', h[2])
    if holder and tonumber(holder) ~= id then
      redis.call('HSET', jk, 'key', '', 'idk', '')
      dropped = dropped + 1
    else
      redis.call('SET', h[2], id)
    end
  end
  redis.call('HSET', jk, 'att', 0, 'dent', '', 'run', now, 'fin', '')
  xadd_job(KEYS[1], jk, id)
  count = count + 1
end
return {'ok', tostring(count), tostring(dropped)}
"#;

/// `purge_dead`: KEYS deadset, dead stream. ARGV: job prefix, bound
/// (`+inf` or `(<ms>`). Reply: count.
pub const PURGE: &str = r#"
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
for _, m in ipairs(ids) do
  local jk = ARGV[1] .. tonumber(m)
  local d = redis.call('HGET', jk, 'dent')
  if d and d ~= '' then redis.call('XDEL', KEYS[2], d) end
  redis.call('ZREM', KEYS[1], m)
  redis.call('DEL', jk)
end
return {tostring(#ids)}
"#;

/// `maintain`, per queue: due retries promoted, retention applied,
/// entries another consumer of the group has held longer than the lease
/// taken back (`XAUTOCLAIM`, at most `ARGV[7]` per pass, the scan's cursor
/// kept in `S:autoclaim`), and the claims whose lease ended listed (at
/// most 256) for Rust to fail with core's rule. An entry taken back from
/// another consumer becomes a claim of chime's whose lease ended now: a
/// started attempt (`att` + 1) that failed, the same path as chime's own
/// expired leases. KEYS stream, delayed, claimed, done, autoclaim cursor.
/// ARGV: job prefix, retention max, retention ms, group, chime's consumer
/// name, lease ms, count, token counter, job counter, queue. Reply: per
/// expired claim id, token, attempt, override of max attempts.
pub const EXPIRED: &str = r#"
local now = now_ms()
promote(KEYS[1], KEYS[2], ARGV[1], now)
prune(KEYS[4], ARGV[1], now, tonumber(ARGV[2]), tonumber(ARGV[3]))
local cursor = redis.call('GET', KEYS[5]) or '0-0'
local ac = redis.call('XAUTOCLAIM', KEYS[1], ARGV[4], ARGV[5], ARGV[6], cursor,
  'COUNT', ARGV[7])
redis.call('SET', KEYS[5], ac[1])
for _, e in ipairs(ac[2]) do
  local ent, f = e[1], e[2]
  local fields = {}
  for i = 1, #f, 2 do fields[f[i]] = f[i + 1] end
  local id = tonumber(fields['job'] or '')
  local jk = nil
  if id == nil then
    if fields['body'] then
      -- Published by another program and read by another consumer:
      -- adopted as claim's adoption does.
      id = redis.call('INCR', ARGV[9])
      jk = ARGV[1] .. id
      redis.call('HSET', jk, 'q', ARGV[10], 'body', fields['body'], 'hdrs', '', 'key', '',
        'idk', '', 'att', 0, 'max', '', 'run', now, 'st', 'available', 'ent', ent,
        'fire', fields['runId'] or '', 'enq', now)
    else
      redis.call('XACK', KEYS[1], ARGV[4], ent)
      redis.call('XDEL', KEYS[1], ent)
    end
  else
    jk = ARGV[1] .. id
  end
  if jk then
    local h = redis.call('HMGET', jk, 'st', 'ent')
    if h[2] ~= ent then
      -- A stale entry (the job was cancelled, or moved on).
      redis.call('XACK', KEYS[1], ARGV[4], ent)
      redis.call('XDEL', KEYS[1], ent)
    elseif h[1] == 'available' then
      -- Delivered to another consumer, which never acknowledged it.
      local tok = redis.call('INCR', ARGV[8])
      redis.call('HINCRBY', jk, 'att', 1)
      redis.call('HSET', jk, 'st', 'claimed', 'tok', tok, 'dl', now, 'wk',
        'another-consumer', 'started', now)
      redis.call('ZADD', KEYS[3], now, pad(id))
      redis.call('ZREM', avail(KEYS[1]), pad(id))
    end
    -- 'claimed' with this entry: chime's own claim (its lease is the
    -- deadline in S:claimed, not the entry's idle time).
  end
end
local out = {}
local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 256)
for _, m in ipairs(due) do
  local h = redis.call('HMGET', ARGV[1] .. tonumber(m), 'tok', 'att', 'max')
  if h[1] then
    out[#out + 1] = tostring(tonumber(m))
    out[#out + 1] = h[1]
    out[#out + 1] = h[2] or '0'
    out[#out + 1] = h[3] or ''
  else
    redis.call('ZREM', KEYS[3], m)
  end
end
return out
"#;

/// `vanished`, per queue: the waiting jobs whose work-stream entry no
/// longer exists, completed. Only another program removes an entry of a
/// job that is `available` with it (chime removes an entry when the job
/// leaves `available`, in the same script): that is the documented
/// complete of a consumer that is not chime (`XACK` + `XDEL`). A job
/// chime claimed is `claimed` (its entry in chime's pending list) and is
/// not looked at; an entry a foreign consumer holds unacknowledged still
/// exists and is left to `XAUTOCLAIM`. The job ends as chime's own
/// completions do (`finish`: `S:done` retention, the key's dedup window),
/// so it ends once: the next look finds it `completed`. The foreign
/// consumer's read counts as the attempt (`att` + 1).
///
/// At most `ARGV[2]` jobs of the index `S:available` per pass, in job-id
/// order from the cursor in `S:availscan` (back to the start after the
/// last); a member whose job is no longer waiting with an entry (its
/// record pruned, or left `available` by another path) is dropped from
/// the index. KEYS stream, index, cursor, done. ARGV: job prefix, count,
/// dedup ms, retention max, retention ms. Reply: per completed job id,
/// fire ('' if none).
pub const VANISHED: &str = r#"
local now = now_ms()
local n = tonumber(ARGV[2])
local cur = tonumber(redis.call('GET', KEYS[3]) or '0') or 0
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. cur, '+inf', 'LIMIT', 0, n)
if #ids < n then
  redis.call('SET', KEYS[3], '0')
else
  redis.call('SET', KEYS[3], tostring(tonumber(ids[#ids])))
end
local out = {}
for _, m in ipairs(ids) do
  local id = tonumber(m)
  local jk = ARGV[1] .. id
  local h = redis.call('HMGET', jk, 'st', 'ent', 'fire')
  if h[1] ~= 'available' or not h[2] or h[2] == '' then
    redis.call('ZREM', KEYS[2], m)
  elseif #redis.call('XRANGE', KEYS[1], h[2], h[2]) == 0 then
    redis.call('ZREM', KEYS[2], m)
    -- The foreign consumer's read was an attempt (as when XAUTOCLAIM
    -- takes an entry back), and it succeeded.
    redis.call('HINCRBY', jk, 'att', 1)
    finish(jk, id, 'completed', now, '', KEYS[4], ARGV[1], tonumber(ARGV[3]),
      tonumber(ARGV[4]), tonumber(ARGV[5]))
    out[#out + 1] = tostring(id)
    out[#out + 1] = h[3] or ''
  end
end
return out
"#;

/// The full source of a script: the prelude, then its body.
pub fn source(body: &str) -> String {
    format!("{PRELUDE}\n{body}")
}
