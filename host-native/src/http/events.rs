//! `GET /v1/events`: Server-Sent Events of fires, skips and job
//! outcomes, from the read port's bounded broadcast (the driver's, or a
//! replica's). Filters:
//! `?schedule=a,b&queue=x&kind=fire,completed` (comma-separated, each
//! optional). A token sees only the names its `read` grants cover. A
//! client that falls [`EVENT_BUFFER`](crate::driver::EVENT_BUFFER)
//! events behind gets a final `lagged` event and the stream ends: it can
//! never stall the driver, which only ever overwrites.

use super::App;
use super::auth::{Principal, Scope};
use super::error::ApiError;
use crate::driver::StreamEvent;
use axum::Extension;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Filter {
    schedule: Option<String>,
    queue: Option<String>,
    kind: Option<String>,
}

fn list(s: Option<String>) -> Option<Vec<String>> {
    s.map(|s| s.split(',').map(str::trim).map(str::to_owned).collect())
}

struct Wanted {
    schedules: Option<Vec<String>>,
    queues: Option<Vec<String>>,
    kinds: Option<Vec<String>>,
    who: Principal,
}

impl Wanted {
    fn wants(&self, e: &StreamEvent) -> bool {
        let is_in = |l: &Option<Vec<String>>, v: Option<&String>| {
            l.as_ref()
                .is_none_or(|l| v.is_some_and(|v| l.iter().any(|x| x == v)))
        };
        // Readable by name: the queue if it has one, else the schedule.
        let subject = e.queue.as_ref().or(e.schedule.as_ref());
        let readable = match (&e.queue, &e.schedule) {
            (Some(q), _) if !self.who.may(Scope::Read, Some(q)) => false,
            (_, Some(s)) if e.queue.is_none() && !self.who.may(Scope::Read, Some(s)) => false,
            _ => subject.is_some() || self.who.may_all(Scope::Read),
        };
        readable
            && is_in(&self.schedules, e.schedule.as_ref())
            && is_in(&self.queues, e.queue.as_ref())
            && self
                .kinds
                .as_ref()
                .is_none_or(|k| k.iter().any(|k| k == e.kind))
    }
}

pub(super) async fn stream(
    State(app): State<App>,
    Extension(who): Extension<Principal>,
    q: Result<Query<Filter>, QueryRejection>,
) -> Result<Sse<impl Stream<Item = Result<Event, std::convert::Infallible>>>, ApiError> {
    who.require_some(Scope::Read)?;
    let Query(f) = q.map_err(|e| ApiError::bad(Some("query"), e.body_text()))?;
    let slot = app.poll_slot(&who)?;
    let wanted = Wanted {
        schedules: list(f.schedule),
        queues: list(f.queue),
        kinds: list(f.kind),
        who,
    };
    let rx = app.ports.reads.events();
    let s = stream::unfold(Some((rx, wanted, slot)), |state| async move {
        let (mut rx, wanted, slot) = state?;
        loop {
            match rx.recv().await {
                Ok(e) if wanted.wants(&e) => {
                    let ev = event(&e);
                    return Some((Ok(ev), Some((rx, wanted, slot))));
                }
                Ok(_) => {}
                Err(RecvError::Lagged(n)) => {
                    let ev = Event::default()
                        .event("lagged")
                        .data(format!("{{\"missed\":{n}}}"));
                    return Some((Ok(ev), None));
                }
                Err(RecvError::Closed) => return None,
            }
        }
    });
    Ok(Sse::new(s).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

fn event(e: &Arc<StreamEvent>) -> Event {
    let data = serde_json::to_string(&**e).unwrap_or_else(|_| "{}".to_owned());
    Event::default().event(e.kind).data(data)
}
