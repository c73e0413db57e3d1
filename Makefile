# Rebuild the paper's figures, tables, numbers and PDF.
#
#   make paper          full run (the paper's numbers; cached under experiments/results/full) + paper/main.pdf
#   make figures        full run without LaTeX
#   make render         redraw figures/tables/macros from the committed archive (experiments/archive), no computation
#   make archive        copy each study's compact full-run results from experiments/results/full to experiments/archive
#   make quick          smoke run (CI): experiments/results/quick/paper/{figures,tables,generated}
#   make paper-quick    smoke run + a PDF built from it in experiments/results/quick/paper/main.pdf
#   make clean-results  delete the caches (experiments/results)
#
# The PDF needs a LaTeX toolchain (see paper/README.md); without one, `make paper` stops after
# the figures with a message.

PYTHON ?= python
JOBS ?= 2
QUICK_DIR := experiments/results/quick
LATEXMK := latexmk -pdf -interaction=nonstopmode -halt-on-error -quiet

.PHONY: paper figures render archive quick paper-quick clean-results clean-latex

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
