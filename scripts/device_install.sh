# Sourced by the device scripts (device_evidence.sh, device_orders.sh, device_session.sh): the GPU machine's
# set-up, as setup.sh does it here. The carried wheels go INTO the interpreter's environment: the suite's
# fresh venvs see that environment's packages but not a PYTHONPATH (they clear it, as a user's shell would).
# Once per machine session: a command that sources it, then starts two device scripts side by side,
# must not have them pip-install into one environment at the same time.
[ -n "${SEAMGATE_INSTALLED:-}" ] && return 0
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile .whl/*.whl >/dev/null 2>&1 \
    || { python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site; }
fi
# seamgate itself (its `seamgate` script, its pytest11 plugin with the `backend` fixture): the suite's CLI,
# fresh-project and tutorial cases run the installed command.
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . >/dev/null 2>&1 \
  || echo "seamgate could not be installed here: the CLI and fresh-project cases will fail" >&2
export SEAMGATE_INSTALLED=1
