//! ferroce host driver.
