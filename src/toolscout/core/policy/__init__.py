"""Who may run what: permission decisions, saved answers, and folder trust.

Rooms: :mod:`.permissions` (allow / ask / deny for one call), :mod:`.local_rules` ("always
allow" answers saved per project), :mod:`.trust`, :mod:`.trust_files` and :mod:`.trust_changes`
(a folder's own config runs nothing until the person approves it). The rule language itself is
:mod:`toolscout.core.rules`.
"""

from .permissions import AskAnswer, Asker, Decision, PermissionPolicy, denied_message
from .trust import FolderTrust, approve_folder, check_folder

__all__ = [
    "AskAnswer",
    "Asker",
    "Decision",
    "FolderTrust",
    "PermissionPolicy",
    "approve_folder",
    "check_folder",
    "denied_message",
]
