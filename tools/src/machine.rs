//! A one-line description of the machine a benchmark runs on.

/// `CPU model, N logical CPUs`, from `/proc/cpuinfo` and the standard library; never fails
/// (unknown parts are written `unknown`).
pub fn describe() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let cpus = std::thread::available_parallelism()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "unknown".to_string());
    format!("{model}, {cpus} logical CPUs (nproc)")
}
