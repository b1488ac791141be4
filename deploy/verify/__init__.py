"""`rocefab verify` and `rocefab doctor`: read the running fabric, compare it with the plan, name the cause."""
