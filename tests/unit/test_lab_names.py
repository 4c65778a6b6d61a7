"""Names of deployed labs: refused characters, and readable names derived from a title."""

from __future__ import annotations

import pytest

from netdojo.labs.errors import LabError
from netdojo.labs.names import ALLOWED_CHARACTERS, check_lab_name, readable_name, slug


@pytest.mark.parametrize("name", ["x", "ospf-lab_2", "Lab.v2", "9lives", "a" * 64])
def test_names_docker_and_kathara_take_are_accepted(name: str) -> None:
    check_lab_name(name)


@pytest.mark.parametrize(
    "name", ["", "my lab", "../etc", "lab/x", "-lab", ".hidden", "lab-é", "a" * 65, "x\n"]
)
def test_other_names_are_refused_naming_the_allowed_characters(name: str) -> None:
    with pytest.raises(LabError) as caught:
        check_lab_name(name)
    assert str(caught.value) == (
        f"lab name {name!r} is refused: a lab name may hold only {ALLOWED_CHARACTERS}"
    )
    assert "letters a-z and A-Z, digits, '_', '.' and '-'" in ALLOWED_CHARACTERS


def test_a_derived_name_keeps_whole_words() -> None:
    title = "Data-centre fabric: BGP unnumbered with ECMP and BFD"
    assert slug(title, 40) == "data-centre-fabric-bgp-unnumbered-with"
    assert readable_name(title, lambda name: False) == "data-centre-fabric-bgp-unnumbered-with"


def test_a_derived_name_drops_accents_and_keeps_underscores() -> None:
    assert readable_name("Réseau_OSPF (été)", lambda name: False) == "reseau_ospf-ete"
    assert readable_name("???", lambda name: False) == "lab"
    assert slug("a" * 50 + " b", 40) == "a" * 40


def test_a_derived_name_is_unique() -> None:
    taken = {"kathara-ospf", "kathara-ospf-2"}
    assert readable_name("kathara_ospf", taken.__contains__) == "kathara_ospf"
    assert readable_name("Kathara OSPF", taken.__contains__) == "kathara-ospf-3"
