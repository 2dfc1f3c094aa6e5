from memtui.core.base.wording import counted


def test_the_noun_agrees_with_the_count() -> None:
    assert counted(1, "memory", "memories") == "1 memory"
    assert counted(0, "memory", "memories") == "0 memories"
    assert counted(2, "file") == "2 files"
    assert counted(1200, "file") == "1,200 files"
    assert counted(1.0, "session") == "1 session"
    assert counted(2.5, "hour") == "2.5 hours"
