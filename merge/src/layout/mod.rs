//! Where an item falls: the hashing and page layouts of count-min sketches, Bloom
//! filters and cuckoo filters.
//!
//! The engine and the C ABI both use these, so a host database that lays its keys out
//! its own way still puts every item in the same cell, bit or bucket as rocksketch, and
//! gets the same answers. Pure arithmetic: nothing here reads or writes a page.

pub mod bloom;
pub mod cms;
pub mod cuckoo;
