"""cellboot: cell-aware server boots orchestrated by persisted TaskFlow flows."""
