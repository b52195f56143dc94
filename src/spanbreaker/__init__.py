"""spanbreaker."""
