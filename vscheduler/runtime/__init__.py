"""The long-running scheduler: settings, the policy holder, and the cycle loop.

Wired together by `vscheduler.app`; nothing here imports `kubernetes`.
"""
