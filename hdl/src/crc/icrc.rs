//! icrc
