"""cellboot: cell-aware server boots run as persisted TaskFlow flows."""
