"""What components talk to: Hugging Face models (:mod:`.hf`), OpenAI-compatible APIs and their
request cache (:mod:`.openai_api`), LLM-judge templates and reply parsing (:mod:`.judging`),
chat-message conventions (:mod:`.conversation`) and rmaudit's offline simulated world
(:mod:`.simulated`).  The built-in components in :mod:`rmaudit.default_plugins` wrap them."""
