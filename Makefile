# Rebuild the paper's figures, tables, numbers and PDF.
#
#   make paper          full run (the paper's numbers; cached under experiments/results/full) + paper/main.pdf
#   make figures        full run without LaTeX
#   make render         redraw figures/tables/macros from the committed archive (experiments/archive), no computation
#   make archive        copy each study's compact full-run results from experiments/results/full to experiments/archive
#   make quick          smoke run (CI): experiments/results/quick/paper/{figures,tables,generated}
#   make paper-quick    smoke run + a PDF built from it in experiments/results/quick/paper/main.pdf
#   make clean-results  delete the caches (experiments/results)
#   make docs           the documentation site, every gallery example executed (docs/_build/html/index.html)
#   make docs-quick     the site with two gallery examples executed, the others shown without output (CI)
#   make clean-docs     delete the built site and the generated pages
#
# The PDF needs a LaTeX toolchain (see paper/README.md); without one, `make paper` stops after
# the figures with a message.

PYTHON ?= python
JOBS ?= 2
QUICK_DIR := experiments/results/quick
LATEXMK := latexmk -pdf -interaction=nonstopmode -halt-on-error -quiet

SPHINXOPTS ?= -W --keep-going -q
DOCS_QUICK ?= /plot_(forest_bands|tidy_seaborn)

.PHONY: paper figures render archive quick paper-quick clean-results clean-latex docs docs-quick clean-docs

paper: figures
	@command -v latexmk >/dev/null || { echo "latexmk not found: install LaTeX (paper/README.md)"; exit 1; }
	cd paper && $(LATEXMK) main.tex && latexmk -c main.tex && rm -f main.bbl

figures:
	$(PYTHON) -m experiments all --n-jobs $(JOBS)

# Studies whose archive is not committed are listed and make fails (the others are still drawn).
render:
	$(PYTHON) -m experiments all --render-only --results-dir experiments/archive --paper-dir paper --skip-missing

archive:
	$(PYTHON) -m experiments all --render-only --archive --skip-missing

quick:
	$(PYTHON) -m experiments all --quick --n-jobs $(JOBS)

paper-quick: quick
	@command -v latexmk >/dev/null || { echo "latexmk not found: install LaTeX (paper/README.md)"; exit 1; }
	cp -r paper/main.tex paper/refs.bib paper/sections paper/jss.cls paper/jss.bst paper/jsslogo.jpg $(QUICK_DIR)/paper/
	cd $(QUICK_DIR)/paper && $(LATEXMK) main.tex && latexmk -c main.tex

clean-results:
	rm -rf experiments/results

clean-latex:
	cd paper && latexmk -C main.tex

# The documentation (pip install -e ".[docs]"): warnings are errors; nothing is fetched from the network.
docs:
	$(PYTHON) -m sphinx -b html $(SPHINXOPTS) docs docs/_build/html

docs-quick:
	PDPBOOT_DOCS_GALLERY='$(DOCS_QUICK)' $(PYTHON) -m sphinx -b html $(SPHINXOPTS) docs docs/_build/html

clean-docs:
	rm -rf docs/_build docs/generated docs/auto_examples docs/validation.rst docs/changelog.rst docs/sg_execution_times.rst
