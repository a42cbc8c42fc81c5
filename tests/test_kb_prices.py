"""`kb update-prices` re-imports a catalog and says what changed; `kb audit` lists what answers rest on without
enough behind it; prices carry date and region, flagged prices stay flagged, currencies convert at dated rates."""
from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.knowledge.audit import audit
from bot.knowledge.catalog import update_prices
from bot.knowledge.loader import default_knowledge, load_knowledge
from bot.records.errors import NotFound
from bot.surfaces.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture()
def kdir(tmp_path) -> Path:
    """A copy of knowledge/ and data/catalog/ to import into."""
    shutil.copytree(ROOT / "knowledge", tmp_path / "knowledge")
    shutil.copytree(ROOT / "data" / "catalog", tmp_path / "data" / "catalog")
    return tmp_path / "knowledge"


def cheaper_verda(tmp_path: Path) -> Path:
    src = (ROOT / "data" / "catalog" / "verda.csv").read_text(encoding="utf-8")
    out = tmp_path / "new"
    out.mkdir()
    (out / "verda.csv").write_text(src.replace("184320 MiB per GPU\",4.89,", "184320 MiB per GPU\",4.49,"),
                                   encoding="utf-8")
    return out


def test_update_prices_reports_the_change_and_dates_the_new_price(tmp_path, kdir):
    report = update_prices(cheaper_verda(tmp_path), kdir, price_date=dt.date(2026, 12, 3))
    assert report["providers"] == ["verda"] and not report["added"] and not report["removed"]
    assert report["changed"] == [{"id": "verda/1B200.30V", "field": "on_demand", "old": 4.89, "new": 4.49,
                                  "pct": -8.2}]
    kb = load_knowledge(kdir)
    p = kb.flavors["verda/1B200.30V"].price
    assert (p.on_demand, p.date, p.region, p.kind) == (4.49, dt.date(2026, 12, 3), "FIN-03", "list")
    # the 8-GPU size without an on-demand price follows Verda's own new per-GPU rate
    assert kb.flavors["verda/8B200.240V"].price.on_demand == pytest.approx(8 * 4.49)


def test_update_prices_keeps_quirk_rows_flagged_and_dry_run_writes_nothing(kdir):
    before = (kdir / "flavors" / "gcp.yaml").read_text(encoding="utf-8")
    report = update_prices(ROOT / "data" / "catalog" / "gcp.csv", kdir, dry_run=True)
    assert "gcp/a2-ultragpu-8g" in report["flagged"] and report["written"] == []
    assert (kdir / "flavors" / "gcp.yaml").read_text(encoding="utf-8") == before


def test_cli_update_prices_and_a_wrong_path(tmp_path, kdir, monkeypatch):
    monkeypatch.setenv("ADVISOR_KNOWLEDGE_DIR", str(kdir))
    res = CliRunner().invoke(main, ["kb", "update-prices", str(cheaper_verda(tmp_path)), "--date", "2026-12-03"])
    assert res.exit_code == 0, res.output
    assert "verda/1B200.30V on_demand: 4.89 -> 4.49 (-8.2 %)" in res.output and "wrote" in res.output
    (tmp_path / "notes.txt").write_text("x")
    bad = CliRunner().invoke(main, ["kb", "update-prices", str(tmp_path / "notes.txt")])
    assert bad.exit_code != 0 and "no catalog CSV found" in bad.output


def test_audit_lists_the_four_kinds_of_finding():
    kb = default_knowledge()
    report = audit(kb, max_age_days=90, today=dt.date(2026, 12, 3))
    assert any(r["id"] == "huaweicloud/p3.16xlarge.8" for r in report["same_stack_only"])
    assert {"id": "huaweicloud/p3.16xlarge.8", "field": "interconnect", "why": "8 GPUs, link not documented"} \
        in report["unknown_decision_fields"]
    assert any(r["id"] == "ascend-910b4" and r["field"] == "bf16" for r in report["unknown_decision_fields"])
    assert not any(r["id"] == "v100-16gb" for r in report["unknown_decision_fields"])   # "unsupported" in its note
    stale = {r["id"] for r in report["stale_prices"]}
    # rates from May; p5en's price from the 2026-08-06 reading (119 days); p5's from 2026-11-09 (24 days)
    assert {"EUR-CNY", "aws/p5en.48xlarge"} <= stale and "aws/p5.48xlarge" not in stale
    later = audit(kb, max_age_days=90, today=dt.date(2027, 6, 1))
    assert any(r["id"] == "aws/p5.48xlarge" for r in later["stale_prices"])
    # an undated price is listed as undated, never as fresh; no date stands in for an unknown one
    assert any(r["id"] == "gcp/a3-highgpu-8g" for r in report["undated_prices"])
    assert report["stand_in_dates"] == []


def test_update_prices_without_a_date_leaves_rows_undated_not_stamped_with_the_import_day(tmp_path, kdir):
    report = update_prices(cheaper_verda(tmp_path), kdir)
    assert report["date"] is None and "verda/1B200.30V" in report["undated"]
    p = load_knowledge(kdir).flavors["verda/1B200.30V"].price
    assert p.date is None and p.date_basis.startswith("Undated")


def test_cli_audit_json():
    res = CliRunner().invoke(main, ["kb", "audit", "--json", "--max-age-days", "30"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["max_age_days"] == 30 and set(data) >= {"weakly_sourced", "same_stack_only",
                                                         "unknown_decision_fields", "stale_prices"}


def test_currency_conversion_uses_the_dated_rate_table():
    kb = default_knowledge()
    usd = kb.convert(100.0, "CNY", "USD")
    assert usd == pytest.approx(100 * 1.1761 / 7.9989)
    assert kb.convert(usd, "usd", "cny") == pytest.approx(100.0)
    assert {r.id for r in kb.rates_used("CNY", "USD")} == {"EUR-CNY", "EUR-USD"}
    with pytest.raises(NotFound) as exc:
        kb.convert(1, "XYZ", "USD")
    assert "knowledge/rates.yaml" in str(exc.value) and "CNY" in str(exc.value)


def test_a_user_price_file_in_cny_stays_in_cny(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("prices:\n  - {flavor: huaweicloud/p3.2xlarge.8, on_demand: 25.0, currency: cny, "
                      "date: 2026-12-01}\n", encoding="utf-8")
    kb = load_knowledge(ROOT / "knowledge", prices)
    p = kb.flavors["huaweicloud/p3.2xlarge.8"].price
    assert (p.kind, p.on_demand, p.currency) == ("local", 25.0, "CNY")
    assert kb.convert(p.on_demand, p.currency, "USD") == pytest.approx(25 * 1.1761 / 7.9989)


def test_every_published_price_has_a_source_date_or_says_it_is_undated():
    """Issue 35: no stand-in date. A list or flagged price is dated by a dated source it cites (its `published` day),
    or has date null and a basis that says "Undated"."""
    kb = default_knowledge()
    for f in kb.flavors.values():
        if f.price and f.price.kind in ("list", "flagged"):
            p = f.price
            assert p.region and p.date_basis, f.id
            if p.date is None:
                assert p.date_basis.startswith("Undated"), f.id
            else:
                assert p.date in {kb.sources[s].published for s in p.sources}, f.id
                assert not any(w in (p.date_basis + (p.basis or "")).lower() for w in ("stands in", "stand-in")), f.id
