// Known offenders for tools/check_references.py (ctest
// self_contained_catches_references): 4 lines refer out of the repository.
// See extender-protocol.md §1.
int Answer() { return 42; }
// The defaults of the webhook (reference volcano.md §1.5).
