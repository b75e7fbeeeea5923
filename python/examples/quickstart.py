#!/usr/bin/env python3
"""vLLM's quickstart snippet on skiff: only the import and the model path differ.

  pip install .            # from the checkout (builds the extension with CMake)
  scripts/fetch-models.sh qwen2.5-coder-0.5b
  python python/examples/quickstart.py
"""
import pathlib

from skiff import LLM, SamplingParams

prompts = [
    "Hello, my name is",
    "The president of the United States is",
    "The capital of France is",
    "The future of AI is",
]
sampling_params = SamplingParams(temperature=0.8, top_p=0.95)

llm = LLM(model=str(pathlib.Path.home() / ".cache/skiff/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"))
outputs = llm.generate(prompts, sampling_params)

for output in outputs:
    prompt = output.prompt
    generated_text = output.outputs[0].text
    print(f"Prompt: {prompt!r}, Generated text: {generated_text!r}")

# A conversation through the model's chat template, streamed as it is decoded.
conversation = [{"role": "user", "content": "Write a Python function that reverses a string."}]
prompt_ids = llm.get_tokenizer().apply_chat_template(conversation, add_generation_prompt=True)
for delta in llm.stream([prompt_ids], SamplingParams(temperature=0, max_tokens=128)):
    print(delta.text, end="", flush=True)
print()
