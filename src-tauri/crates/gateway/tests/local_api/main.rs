//! The local API over real HTTP, against the fake provider: what a client may send it, and what
//! a hostile provider can and cannot do to it.

mod bounds;
mod connections;
mod gemini;
mod hostile;
mod loops;
mod openrouter;
mod responses;
mod serving;
mod sessions;
mod support;
mod translate;
mod upstream;
