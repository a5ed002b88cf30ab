//! Matches (to come).
