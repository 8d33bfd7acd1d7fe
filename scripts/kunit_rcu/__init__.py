# SPDX-License-Identifier: GPL-2.0
"""kunit-rcu tooling: prepare a Debian 6.1 tree, build, boot under QEMU, judge."""
