# Two commands a newcomer needs: `make run` and `make test`. Everything they install goes into .venv.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml requirements.lock | cksum | cut -d' ' -f1)
LOCK_FLAGS := --extra test --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links

.PHONY: run test install lint lock validate bench clean

# -qq: pip shows errors only (setuptools prints an informational "Editable installation" notice on every install).
# -c requirements.lock: every package at the version CI and the image were tested with (`make lock` re-resolves it).
$(STAMP): pyproject.toml requirements.lock
	@test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -qq --disable-pip-version-check -c requirements.lock --upgrade pip
	@$(BIN)/python -m pip install -qq --disable-pip-version-check -c requirements.lock -e '.[test]'
	@rm -f $(VENV)/.installed-* && touch $@

install: $(STAMP)

# The Slack bot when Slack tokens are set, otherwise the terminal chat on the same pipeline;
# `make run ARGS='ask "serve llama 3 8b"'` runs that gpu-advisor command instead (the command is .venv/bin/gpu-advisor).
run: install
	@if [ -n '$(subst ','\'',$(ARGS))' ]; then \
		exec $(BIN)/gpu-advisor $(ARGS); \
	elif [ -n "$$SLACK_BOT_TOKEN" ] && { [ -n "$$SLACK_APP_TOKEN" ] || [ -n "$$SLACK_SIGNING_SECRET" ]; }; then \
		exec $(BIN)/gpu-advisor serve; \
	else \
		echo "No Slack tokens set (SLACK_BOT_TOKEN + SLACK_APP_TOKEN or SLACK_SIGNING_SECRET): starting the terminal chat."; \
		exec $(BIN)/gpu-advisor chat; \
	fi

test: install
	@$(BIN)/gpu-advisor kb validate
	@$(BIN)/python -m pytest

# Ruff with the rules in pyproject.toml ([tool.ruff]); tests/test_lint.py runs the same check, so `make test` fails on a finding.
lint: install
	@$(BIN)/ruff check .

# Re-resolve requirements.lock from pyproject.toml (pip-tools, in a throwaway venv): after changing a dependency or to
# take newer releases within the bounds. Commit the result; `make install`, CI and deploy/Dockerfile install from it.
lock:
	@tmp=$$(mktemp -d) && $(PYTHON) -m venv $$tmp && $$tmp/bin/python -m pip install -qq --disable-pip-version-check pip-tools \
		&& CUSTOM_COMPILE_COMMAND='make lock' $$tmp/bin/pip-compile -q --upgrade $(LOCK_FLAGS) -o requirements.lock pyproject.toml; rc=$$?; rm -rf $$tmp; exit $$rc

validate: install
	@$(BIN)/gpu-advisor kb validate

bench: install
	@$(BIN)/python bench/memory_accuracy.py
	@$(BIN)/python bench/latency.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
