//! The job search getter (see `queue::search`).

use super::Engine;
use crate::queue::{JobPage, JobQuery};

impl Engine {
    /// One page of the jobs of a queue by state, key and id range, in id
    /// order: at most `query.limit` (capped at
    /// [`SEARCH_LIMIT`](crate::SEARCH_LIMIT)) jobs, and at most
    /// [`SEARCH_SCAN`](crate::SEARCH_SCAN) looked at, so it stays short
    /// on a host's engine task. `next` is the `after` of the next page.
    pub fn search_jobs(&self, query: &JobQuery) -> JobPage {
        self.queues.search(query)
    }
}
