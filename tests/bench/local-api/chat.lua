-- wrk: every request is the same small OpenAI chat completion request, with the token in
-- TOKEN (the local API's; any value for nginx and the upstream, which do not check it).
wrk.method = "POST"
wrk.path = "/v1/chat/completions"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("TOKEN") or "bench")
wrk.body = '{"model":"bench-model","messages":[{"role":"user","content":"say hi"}]}'
