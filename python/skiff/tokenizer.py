"""The model's tokenizer and chat template, as transformers' tokenizer methods."""
from __future__ import annotations

import json
from typing import List, Optional


def chat_body(messages, add_generation_prompt: bool, tools=None, chat_template_kwargs=None) -> str:
    """A chat request's fields, as the server's render_chat reads them."""
    body = {"messages": messages, "add_generation_prompt": add_generation_prompt}
    if tools is not None:
        body["tools"] = tools
    if chat_template_kwargs:
        body["chat_template_kwargs"] = chat_template_kwargs
    return json.dumps(body)


class Tokenizer:
    def __init__(self, engine):
        self._engine = engine

    def encode(self, text: str, add_special_tokens: bool = True) -> List[int]:
        return list(self._engine.encode(text, add_special_tokens))

    def decode(self, token_ids: List[int], skip_special_tokens: bool = True) -> str:
        return self._engine.decode(list(token_ids), skip_special_tokens)

    @property
    def vocab_size(self) -> int:
        return self._engine.vocab_size()

    @property
    def eos_token_id(self) -> Optional[int]:
        eos = self._engine.eos_id()
        return eos if eos >= 0 else None

    def apply_chat_template(self, conversation, tokenize: bool = True, add_generation_prompt: bool = False,
                            tools=None, **chat_template_kwargs):
        """The conversation through the model's template; token ids (no BOS added:
        the template writes it) or, with tokenize=False, the text."""
        body = chat_body(conversation, add_generation_prompt, tools, chat_template_kwargs)
        return list(self._engine.encode_chat(body)) if tokenize else self._engine.render_chat(body)
