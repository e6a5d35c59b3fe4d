//! API groups served by the Student controller.

pub mod example;
