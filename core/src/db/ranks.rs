//! The ranks of a job: processes (or threads) that build one database together and speak only
//! through short messages ([`crate::db::distributed`]).
//!
//! [`Ranks`] is all the builder asks of a message layer: its rank, the number of ranks, a send
//! that does not wait for the receiver, and a receive that does not wait for a message. The
//! `kalah` command implements it over MPI (the `mpi` feature); [`in_process`] implements it
//! over channels, for threads of one process, so that the split build can be tested (and used)
//! without MPI.

use std::sync::mpsc::{Receiver, Sender, channel};

/// One rank's view of a job of [`Ranks::size`] ranks, numbered from 0.
pub trait Ranks {
    /// This rank, `0..size()`.
    fn rank(&self) -> usize;
    /// The number of ranks in the job.
    fn size(&self) -> usize;
    /// Sends `message` to rank `to` (not this one). Messages from one rank to another arrive in
    /// the order they were sent. Returns without waiting for the receiver to take it.
    fn send(&self, to: usize, message: &[u8]);
    /// A message that has arrived for this rank, with the rank that sent it; `None` at once if
    /// there is none.
    fn try_receive(&self) -> Option<(usize, Vec<u8>)>;
}

/// A rank of a job of threads in one process (see [`in_process`]).
pub struct InProcess {
    rank: usize,
    senders: Vec<Sender<(usize, Vec<u8>)>>,
    receiver: Receiver<(usize, Vec<u8>)>,
}

/// The `size` ranks of a job whose ranks are threads of this process, to be moved one into
/// each thread.
pub fn in_process(size: usize) -> Vec<InProcess> {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..size).map(|_| channel()).unzip();
    receivers
        .into_iter()
        .enumerate()
        .map(|(rank, receiver)| InProcess {
            rank,
            senders: senders.clone(),
            receiver,
        })
        .collect()
}

impl Ranks for InProcess {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.senders.len()
    }

    fn send(&self, to: usize, message: &[u8]) {
        // A rank that has already returned takes no more messages; nothing waits for them.
        let _ = self.senders[to].send((self.rank, message.to_vec()));
    }

    fn try_receive(&self) -> Option<(usize, Vec<u8>)> {
        self.receiver.try_recv().ok()
    }
}
