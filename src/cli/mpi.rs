//! `kalah db build --mpi`: the ranks of an MPI job (the `mpi` feature, over the system's MPI
//! library), as the split build's message layer ([`kalah::db::ranks::Ranks`]).

use kalah::db::ranks::Ranks;
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};

use super::CliError;

/// This process's rank in the job's world, for as long as MPI is up (it is shut down when
/// this is dropped).
pub struct MpiRanks {
    world: SimpleCommunicator,
    /// Ranks of the job on this machine (this one included).
    here: usize,
    // Dropped last: MPI_Finalize.
    _universe: Universe,
}

/// Starts MPI (once a process). From then on a panic on this rank aborts the whole job at
/// once: unwinding would shut MPI down on this rank only, and leave the others waiting for it.
pub fn start() -> Result<MpiRanks, CliError> {
    // Only this thread speaks MPI; the build's worker threads never do.
    let (universe, _) =
        mpi::initialize_with_threading(mpi::Threading::Funneled).ok_or_else(|| {
            CliError::failure("cannot start MPI (it was started already in this process)")
        })?;
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        SimpleCommunicator::world().abort(101);
    }));
    let world = universe.world();
    let here = world.split_shared(world.rank()).size() as usize;
    Ok(MpiRanks {
        world,
        here,
        _universe: universe,
    })
}

impl MpiRanks {
    /// The worker threads a rank runs when not told: this machine's cores shared among the
    /// job's ranks on it (one at least).
    pub fn default_threads(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores / self.here).clamp(1, 64)
    }
}

impl Ranks for MpiRanks {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn send(&self, to: usize, message: &[u8]) {
        // A standard-mode send of a short message: buffered by MPI, it does not wait for the
        // receiver, which polls.
        self.world.process_at_rank(to as i32).send(message);
    }

    fn try_receive(&self) -> Option<(usize, Vec<u8>)> {
        let probed = self.world.any_process().immediate_matched_probe()?;
        let (message, status) = probed.matched_receive_vec::<u8>();
        Some((status.source_rank() as usize, message))
    }
}
