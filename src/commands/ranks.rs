//! The one place the command line starts the ranks of a job: under `mpirun` (cargo feature
//! `mpi`) one rank of an MPI job, otherwise one process, which is one rank
//! ([`LocalComm`](oware_solver::distributed::LocalComm)). `generate` and `verify --deep`
//! run through [`run_on_ranks`].

use std::process::ExitCode;

use anyhow::bail;
use oware_solver::distributed::Comm;

/// Runs `job` on the ranks this process belongs to, with `threads` worker threads per rank
/// (default: one per core).
///
/// The worker threads are rayon's global pool ([`start_workers`](super::common::start_workers)),
/// and `job` runs on this (main) thread:
///
/// - One process: `job` runs on [`LocalComm`](oware_solver::distributed::LocalComm); its
///   result is returned.
/// - One rank of an MPI job (a binary built with the feature `mpi` and started by
///   `mpirun`): MPI is initialised first, and this thread alone calls it. After it succeeds, rank 0 prints every rank's
///   peak memory (unless `quiet`). An error ends the whole job, since the other ranks may
///   wait for this one forever: a held lock is told by rank 0 alone (exit status 2), a
///   rank that stops because another failed says nothing (that one tells why), any other
///   error is printed with its rank. A rank that says nothing leaves the ending of the job
///   to the rank that tells (waiting up to a minute), so that the job never ends before
///   the reason is printed.
///
/// # Errors
/// This binary lacks MPI but was started as one of several processes by `mpirun`; the
/// worker threads cannot start; `job`'s error on one process.
pub fn run_on_ranks(
    threads: Option<usize>,
    quiet: bool,
    job: impl FnOnce(&dyn Comm) -> anyhow::Result<ExitCode>,
) -> anyhow::Result<ExitCode> {
    refuse_mpi_job_without_mpi()?;
    #[cfg(feature = "mpi")]
    if launched_by_mpi() {
        return run_mpi(threads, quiet, job);
    }
    let _ = quiet;
    super::common::start_workers(threads)?;
    job(&oware_solver::distributed::LocalComm)
}

/// `job` as one rank of an MPI job (see [`run_on_ranks`]).
#[cfg(feature = "mpi")]
fn run_mpi(
    threads: Option<usize>,
    quiet: bool,
    job: impl FnOnce(&dyn Comm) -> anyhow::Result<ExitCode>,
) -> anyhow::Result<ExitCode> {
    use anyhow::Context;
    use oware_solver::distributed::MpiComm;
    use oware_solver::{GenerateError, LockError, RankError, VerifyError};
    let comm = MpiComm::init().context("cannot initialise MPI (funneled threading)")?;
    super::common::start_workers(threads)?;
    match job(&comm) {
        Ok(code) => {
            let peaks = super::progress::rank_peaks(&comm);
            if let Some(peaks) = peaks.filter(|_| !quiet) {
                crate::output::errln!("{peaks}");
            }
            Ok(code)
        }
        Err(e) => {
            if let Some(lock) = e.downcast_ref::<LockError>() {
                // Every rank learns it together; rank 0 tells.
                let code = if matches!(lock, LockError::Held { .. }) {
                    2
                } else {
                    1
                };
                if comm.rank() != 0 {
                    await_abort(&comm, code)
                }
                crate::output::errln!("error: {lock}");
                comm.abort(code)
            }
            let stopped_by_another = match (
                e.downcast_ref::<GenerateError>(),
                e.downcast_ref::<VerifyError>(),
            ) {
                (Some(GenerateError::Rank(RankError::Failed { .. })), _)
                | (_, Some(VerifyError::Rank(RankError::Failed { .. }))) => true,
                (Some(GenerateError::Alloc(a)), _) | (_, Some(VerifyError::Alloc(a))) => {
                    a.failed_rank().is_some()
                }
                _ => false,
            };
            if stopped_by_another {
                // The rank that failed tells why; every rank stopped with it.
                await_abort(&comm, 1)
            }
            crate::output::errln!("error: rank {}: {e:#}", comm.rank());
            comm.abort(1)
        }
    }
}

/// Seconds a rank that does not tell the job's error waits for the rank that does to end
/// the job, before it ends the job itself.
#[cfg(feature = "mpi")]
const TELLER_WAIT_SECS: u64 = 60;

/// Ends the job with `code` from a rank that does not tell why: first waits, up to
/// [`TELLER_WAIT_SECS`], for the rank that tells to print its error and end the job (which
/// ends this rank too). Ending it at once could kill that rank before it has printed, and the
/// job would stop without saying why.
#[cfg(feature = "mpi")]
fn await_abort(comm: &oware_solver::distributed::MpiComm, code: i32) -> ! {
    std::thread::sleep(std::time::Duration::from_secs(TELLER_WAIT_SECS));
    comm.abort(code)
}

/// Refuses to run as one of several processes of an MPI job in a binary built without the
/// cargo feature `mpi`: each would run alone, over the same directory.
///
/// # Errors
/// This binary lacks MPI and was started as one of several processes by `mpirun`.
pub(crate) fn refuse_mpi_job_without_mpi() -> anyhow::Result<()> {
    let size = super::env::get().mpi_job_size;
    if cfg!(not(feature = "mpi")) && size.is_some_and(|n| n > 1) {
        bail!(
            "started by mpirun as one of {} processes, but this oware was built without MPI: \
             build it with `cargo build --release --features mpi`",
            size.unwrap_or(0)
        );
    }
    Ok(())
}

/// Whether this process was started by `mpirun` (Open MPI, MPICH or a PMIx launcher).
#[cfg(feature = "mpi")]
pub(crate) fn launched_by_mpi() -> bool {
    super::env::get().launched_by_mpi
}
