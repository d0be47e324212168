from agents.replay_agent import ReplayAgent
from tests.conftest import make_config, run_episode


def test_walkthrough_reaches_full_score(rom_path, walkthrough, tmp_path):
    result = run_episode(rom_path, make_config(tmp_path), ReplayAgent(walkthrough, kind="walkthrough"))
    assert result.summary["final_score"] == 350
    assert result.summary["termination_reason"] == "victory"
    assert len(result.records) == result.summary["turns"] == 396
