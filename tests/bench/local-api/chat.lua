-- wrk: every request is the same small chat request, with the token in TOKEN (the endpoint's;
-- any value for nginx and the upstream, which do not check it). ANSWER chooses which:
--   whole       an OpenAI chat completion, answered whole (the default)
--   stream      the same streamed ("stream": true), the model whose provider's answers are the
--               upstream's 40-event stream; to nginx, its path is the upstream's (/stream/v1/…)
--   translated  an Anthropic Messages request, streamed, for a model routed to that provider
local answer = os.getenv("ANSWER") or "whole"
local token = os.getenv("TOKEN") or "bench"
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
if answer == "translated" then
  wrk.path = "/v1/messages"
  wrk.headers["x-api-key"] = token
  wrk.headers["anthropic-version"] = "2023-06-01"
  wrk.body = '{"model":"claude-bench","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"say hi"}]}'
else
  wrk.path = os.getenv("WRK_PATH") or "/v1/chat/completions"
  wrk.headers["Authorization"] = "Bearer " .. token
  if answer == "stream" then
    wrk.body = '{"model":"bench-stream","stream":true,"messages":[{"role":"user","content":"say hi"}]}'
  else
    wrk.body = '{"model":"bench-model","messages":[{"role":"user","content":"say hi"}]}'
  end
end
