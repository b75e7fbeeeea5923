"""skiff: vLLM's offline API (LLM, SamplingParams) over the skiff C++ engine."""
from .llm import LLM
from .outputs import CompletionOutput, RequestMetrics, RequestOutput
from .sampling_params import GuidedDecodingParams, SamplingParams, StructuredOutputsParams

__all__ = ["LLM", "SamplingParams", "RequestOutput", "CompletionOutput", "RequestMetrics",
           "StructuredOutputsParams", "GuidedDecodingParams"]
