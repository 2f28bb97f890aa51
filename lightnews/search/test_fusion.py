from lightnews.search.fusion import K, fuse


def test_a_paper_high_in_both_lists_beats_the_top_of_one() -> None:
    fused = fuse({"words": ["a", "b", "c"], "meaning": ["d", "b", "e"]})
    keys = [key for key, _, _ in fused]
    assert keys[:3] == ["b", "a", "d"]  # b: 2nd in both; a and d: 1st in one, tied
    assert dict((key, origins) for key, _, origins in fused)["d"] == ["meaning"]
    assert fused[0][1] == 2 / (K + 2)


def test_ties_keep_first_appearance_and_one_list_keeps_its_order() -> None:
    assert [k for k, _, _ in fuse({"words": ["x", "y"], "meaning": ["y", "x"]})] == ["x", "y"]
    assert [k for k, _, _ in fuse({"words": ["p", "q", "r"]})] == ["p", "q", "r"]
    assert fuse({}) == []


def test_a_lighter_list_breaks_ties_toward_the_heavier_one() -> None:
    lists = {"words": ["a", "b"], "meaning": ["c", "a"]}
    assert [k for k, _, _ in fuse(lists)][:2] == ["a", "c"]
    weighted = fuse({"words": ["w"], "meaning": ["m"]}, {"meaning": 0.5})
    assert [k for k, _, _ in weighted] == ["w", "m"]
    assert weighted[1][1] == 0.5 / (K + 1)
