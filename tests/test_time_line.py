"""The how-long verdict's wall clock reads the same in hours and days: a job under a day is said in hours alone
('0.80 h (0 days)' contradicted itself), and a longer one's day figure is its hours over 24."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.render.templates import default_templates
from bot.render.verdicts import time_line

T = default_templates()


@settings(max_examples=200, deadline=None)
@given(hours=st.floats(min_value=0.01, max_value=20000), answer=st.sampled_from(["estimate", "yes"]),
       lang=st.sampled_from(["en", "zh"]))
def test_days_match_hours(hours, answer, lang):
    v = {"answer": answer, "hours": hours, "days": round(hours / 24, 1), "cards": 8, "gpu_name": "H100",
         "deadline_days": 10000}
    line = time_line(T, v, lang)
    days = re.search(r"[（(]([\d,.]+) ?(?:days|天)[)）]", line)
    if hours < 24:
        assert not days, line
    else:
        assert days and abs(float(days.group(1).replace(",", "")) * 24 - hours) <= max(2.4, 0.06 * hours), line
