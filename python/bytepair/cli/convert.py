"""``bytepair convert IN OUT``: a tokenizer file in another format.

Formats: ``bytepair`` (native JSON), ``hf`` (Hugging Face tokenizer.json),
``tiktoken`` (``.tiktoken``), ``gpt2`` (a folder: vocab.json + merges.txt),
``subword-nmt`` (codes). ``--from`` is detected from IN when omitted, ``--to``
from OUT's name (``*.tiktoken``; a name ending in ``tokenizer.json`` is
Hugging Face's, ``tekken.json`` Mistral's; ``*.model`` is SentencePiece;
other ``*.json`` is native; ``*.codes`` is subword-nmt; a folder or another
name needs ``--to``). Conversions are
exact or refused: a format that cannot hold the tokenizer exactly is an
error saying why, and OUT is left as it was.

Examples::

    $ bytepair convert cl100k_base.tiktoken tokenizer.json
    $ bytepair convert tokenizer.json gpt2-files --to gpt2
    $ bytepair convert ranks.tiktoken tok.json --pattern gpt2 --special '<|endoftext|>=50256'
    $ bytepair convert tok.json my-model --to transformers --eos '<|endoftext|>'

Without ``--to``, OUT's name gives the format (:func:`bytepair.cli.common.guess_format`):

>>> import argparse
>>> sub = argparse.ArgumentParser().add_subparsers()
>>> add_parser(sub)
>>> args = sub.choices["convert"].parse_args(["tok.json", "y-tokenizer.json"])
>>> args.target, guess_format(args.output)
(None, 'hf')
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Dict, List, Optional, TextIO

from bytepair.cli.common import FOLDER_FORMATS, check_output, guess_format
from bytepair.cli.options import CliError
from bytepair.formats import FORMATS, detect
from bytepair.tokenizer import Tokenizer


def _specials(items: Optional[List[str]]) -> Optional[Dict[str, int]]:
    if not items:
        return None
    out = {}
    for item in items:
        text, sep, id_ = item.rpartition("=")
        if not sep or not text or not id_.isdigit():
            raise CliError(f"--special {item!r}: write TEXT=ID, e.g. '<|endoftext|>=50256'")
        out[text] = int(id_)
    return out


def run(args: argparse.Namespace, out: TextIO) -> int:
    if not os.path.lexists(args.input):
        raise CliError(f"{args.input}: no such tokenizer file")
    source = args.source or detect(args.input)
    target = args.target or guess_format(args.output)
    if target is None:
        raise CliError(f"cannot tell the format of {args.output} from its name: pass --to ({', '.join(sorted(FORMATS))})")
    check_output(args.output, folder=target in FOLDER_FORMATS)
    tok = Tokenizer.load(args.input, format=source, pattern=args.pattern, special_tokens=_specials(args.special))
    roles = {r: getattr(args, r, None) for r in ("bos", "eos", "pad", "unk")}
    template = getattr(args, "chat_template", None)
    max_length = getattr(args, "model_max_length", None)
    if target == "transformers":
        if template is not None:
            try:
                with open(template, encoding="utf-8") as f:
                    template = f.read()
            except (OSError, UnicodeDecodeError) as e:
                raise CliError(f"--chat-template {template}: cannot read it ({e})") from None
        tok.save_pretrained(args.output, chat_template=template, model_max_length=max_length, **roles)
    elif any(v is not None for v in [*roles.values(), template, max_length]):
        raise CliError("--bos/--eos/--pad/--unk/--chat-template/--model-max-length need --to transformers")
    else:
        tok.save(args.output, format=target)
    print(f"{args.input} ({source}) -> {args.output} ({target})", file=sys.stderr)
    return 0


def add_parser(sub: "argparse._SubParsersAction") -> None:
    formats = sorted(FORMATS)
    p = sub.add_parser(
        "convert",
        help="convert a tokenizer file to another format",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    p.add_argument("input", metavar="IN", help="tokenizer file (or gpt2 folder)")
    p.add_argument("output", metavar="OUT", help="where to write it (a folder for --to gpt2)")
    p.add_argument("--from", dest="source", choices=formats, metavar="FMT",
                   help=f"format of IN ({', '.join(formats)}; detected when omitted)")
    p.add_argument("--to", dest="target", choices=formats, metavar="FMT",
                   help="format of OUT (guessed from its name when omitted)")
    p.add_argument("--pattern", default=None,
                   help="pre-tokenizer for IN formats that store none (.tiktoken, gpt2 files): gpt2, cl100k, o200k or a regex")
    p.add_argument("--special", action="append", metavar="TEXT=ID",
                   help="a special token and its id, replacing IN's (for .tiktoken files, which hold none); repeatable")
    for role in ("bos", "eos", "pad", "unk"):
        p.add_argument(f"--{role}", metavar="TEXT", default=None,
                       help=f"--to transformers: the special token that is the {role} token")
    p.add_argument("--chat-template", metavar="FILE", default=None,
                   help="--to transformers: a Jinja chat template file, written into tokenizer_config.json")
    p.add_argument("--model-max-length", metavar="N", type=int, default=None,
                   help="--to transformers: model_max_length in tokenizer_config.json")
    p.set_defaults(run=run)
