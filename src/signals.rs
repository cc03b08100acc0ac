//! Interrupts of the writing commands: on SIGINT, SIGTERM or SIGHUP the process cancels its
//! writers ([`cancel`]), which removes the temporaries of the directories they hold locked,
//! then ends.

use std::sync::OnceLock;

use oware_solver::Cancel;

/// The cancellation of this process's writers, handed to every job that writes and
/// cancelled by the signal thread of [`clean_up_on_signals`].
pub fn cancel() -> &'static Cancel {
    static CANCEL: OnceLock<Cancel> = OnceLock::new();
    CANCEL.get_or_init(Cancel::new)
}

/// Ends the process on SIGINT, SIGTERM or SIGHUP, with exit status 128 + the signal, after
/// cancelling its writers ([`cancel`]), which removes the temporaries (scratch, partial
/// `.tmp` files) of every directory they hold locked: the directory keeps its complete tiers
/// only.
///
/// The signals are blocked in the calling thread and so in every thread it starts later, and
/// one thread of their own waits for them (`sigwait`): the cleanup runs in an ordinary
/// thread, not in a signal handler. Call it before any other thread is started.
#[cfg(unix)]
pub fn clean_up_on_signals() {
    // SAFETY: an all-zero `sigset_t` is plain data, initialised by `sigemptyset` before use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: the calls only read and write the signal set passed.
    let blocked = unsafe {
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) == 0
    };
    if !blocked {
        return;
    }
    let waiter = move || loop {
        let mut sig: libc::c_int = 0;
        // SAFETY: `set` is a valid initialised signal set, `sig` a place to write to.
        if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
            cancel().cancel();
            // Best effort: a stderr that fails (a closed terminal, a full disk) must not stop
            // the exit, since the directory's lock is held until the process ends.
            let msg = format!("\ninterrupted (signal {sig}); only complete tiers are kept\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr(), msg.as_bytes());
            std::process::exit(128 + sig);
        }
    };
    if std::thread::Builder::new()
        .name("signals".into())
        .spawn(waiter)
        .is_err()
    {
        // No thread to wait for them: let the signals end the process as before.
        // SAFETY: as above.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

/// Interrupts keep their default action on this platform.
#[cfg(not(unix))]
pub fn clean_up_on_signals() {}
