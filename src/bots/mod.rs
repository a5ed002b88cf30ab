//! Bots for game servers: protocol clients that play with the engines of [`crate::play`].
//! They never print; what they do comes back through logs and return values.

pub mod kgp;
pub mod mankalah;
