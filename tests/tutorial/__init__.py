"""The tutorial cannot rot: every command of docs/tutorial.md run on a copy of examples/toyengine; `seamgate init` on empty projects."""
