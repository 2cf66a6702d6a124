"""benchmarks/battery_study's options: each checked before anything trains (one line on stderr,
exit 2, nothing written)."""

import pytest

from benchmarks.battery_study import parse


@pytest.mark.parametrize("argv, says", [
    (["--fractions", "1", "0"], "--fractions takes positive numbers, not 0"),
    (["--fractions", "0.5", "nan"], "--fractions takes positive numbers, not nan"),
    (["--fractions", "0.5", "0.5"], "--fractions names 0.5 twice"),
    (["--seeds", "0", "1", "0"], "--seeds names 0 twice"),
    (["--seeds", "-1"], "--seeds"),
    (["--rounds", "0"], "--rounds"),
    (["--rounds", "3", "--rounds", "4"], "--rounds"),
])
def test_a_bad_option_is_one_line_exit_2_nothing_written(argv, says, tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_:
        parse([*argv, "--out", str(out), "--figure", str(tmp_path / "b.png")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.strip().splitlines()) == 1 and says in err and "Traceback" not in err
    assert not out.exists() and not (tmp_path / "b.png").exists()


def test_the_defaults_are_five_seeds_and_three_batteries(tmp_path):
    args = parse(["--out", str(tmp_path / "out")])
    assert (args.seeds, args.fractions, args.rounds) == ([0, 1, 2, 3, 4], [1.0, 0.5, 0.25], 30)
