def register() -> None:
    """Register the manual_review queue's decision handler."""
