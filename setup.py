"""The shipped corpora (corpus/ at the top of the source tree, where the Makefile, the tests and
the docs name them) go into the wheel as the package data ``stress/corpora/``: one copy in the
source tree, found by :mod:`stress.shipped` in a checkout and in an installed wheel alike.
Everything else about the build is in pyproject.toml."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CORPUS = Path(__file__).resolve().parent / "corpus"


class BuildPyWithCorpora(build_py):
    """``build_py`` that also copies corpus/**/*.toml to ``<build_lib>/stress/corpora/``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install reads corpus/ in place
            return
        target = Path(self.build_lib) / "stress" / "corpora"
        for src in sorted(CORPUS.rglob("*.toml")):
            dest = target / src.relative_to(CORPUS)
            self.mkpath(str(dest.parent))
            self.copy_file(str(src), str(dest))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        target = Path(self.build_lib) / "stress" / "corpora"
        extra = [str(target / s.relative_to(CORPUS)) for s in sorted(CORPUS.rglob("*.toml"))]
        return [*super().get_outputs(include_bytecode), *extra]


setup(cmdclass={"build_py": BuildPyWithCorpora})
