"""`--kinds` of the corpus and generated benchmarks: a kind no run has is one error line and exit 2, never a
benchmark that plays nothing and writes an empty results file."""

from __future__ import annotations

import pytest

from benchmarks import corpus, generated


@pytest.mark.parametrize("main", [corpus.main, generated.main], ids=["corpus", "generated"])
def test_an_unknown_kind_is_one_error_and_exit_2(main, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--kinds", "optimal,llm", "--out", str(tmp_path / "out")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unknown kind llm" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_every_kind_and_stuck_kind_is_accepted():
    assert corpus.kinds_list(",".join(corpus.KINDS)) == list(corpus.KINDS)
    assert corpus.kinds_list(corpus.DEFAULT_KINDS) == corpus.DEFAULT_KINDS.split(",")
