"""Turning what a knowledge file got wrong into file / key / fix lines, with "did you mean" for a misspelt name.

Its own module, below loader.py and prices.py, so that both can report problems the same way without importing
each other (the loader reads the price tables; the price tables report with these helpers)."""
from __future__ import annotations

from typing import Iterable

from pydantic import BaseModel, ValidationError
from rapidfuzz import process

from bot.records.errors import Problem


def did_you_mean(word: str, choices: Iterable[str], limit: int = 3, cutoff: float = 60) -> list[str]:
    found = process.extract(word, list(choices), limit=limit, score_cutoff=cutoff)
    return [c for c, _score, _i in found]


def validation_problems(rel: str, where: str, model: type[BaseModel], exc: ValidationError) -> list[Problem]:
    """Turn pydantic's errors into file/key/fix lines, with "did you mean" for misspelt keys."""
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        key = f"{where}.{loc}" if loc else where
        if err["type"] == "extra_forbidden":
            bad = str(err["loc"][-1])
            fields = list(model.model_fields) if len(err["loc"]) == 1 else []
            guess = did_you_mean(bad, fields) if fields else []
            hint = f"did you mean '{guess[0]}'?" if guess else "remove it"
            out.append(Problem(rel, key, f"unknown key '{bad}'", hint))
        elif err["type"] == "missing":
            out.append(Problem(rel, key, "required key is missing", f"add '{err['loc'][-1]}'"))
        else:
            out.append(Problem(rel, key, err["msg"], f"give a value that is {err['msg'].lower()}".replace(
                "give a value that is input should be", "use")))
    return out
