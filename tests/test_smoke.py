def test_walkthrough_reaches_full_score(walkthrough_episode):
    result = walkthrough_episode
    assert result.summary["final_score"] == 350
    assert result.summary["termination_reason"] == "victory"
    assert len(result.records) == result.summary["turns"] == 396
