//! The REPL's history file with known secrets redacted: a line that quotes an API key or
//! a vault value is saved with `«secret:NAME»` in its place (see [`loki_wire::secrets`]).

use reedline::{
    FileBackedHistory, History, HistoryItem, HistoryItemId, HistorySessionId, SearchQuery,
};

/// A [`FileBackedHistory`] whose saved lines are redacted.
pub struct Redacting(pub FileBackedHistory);

impl History for Redacting {
    fn save(&mut self, mut h: HistoryItem) -> reedline::Result<HistoryItem> {
        if let std::borrow::Cow::Owned(clean) = loki_wire::secrets::redact(&h.command_line) {
            h.command_line = clean;
        }
        self.0.save(h)
    }

    fn load(&self, id: HistoryItemId) -> reedline::Result<HistoryItem> {
        self.0.load(id)
    }

    fn count(&self, query: SearchQuery) -> reedline::Result<i64> {
        self.0.count(query)
    }

    fn search(&self, query: SearchQuery) -> reedline::Result<Vec<HistoryItem>> {
        self.0.search(query)
    }

    fn update(
        &mut self,
        id: HistoryItemId,
        updater: &dyn Fn(HistoryItem) -> HistoryItem,
    ) -> reedline::Result<()> {
        self.0.update(id, updater)
    }

    fn clear(&mut self) -> reedline::Result<()> {
        self.0.clear()
    }

    fn delete(&mut self, h: HistoryItemId) -> reedline::Result<()> {
        self.0.delete(h)
    }

    fn sync(&mut self) -> std::io::Result<()> {
        self.0.sync()
    }

    fn session(&self) -> Option<HistorySessionId> {
        self.0.session()
    }
}
