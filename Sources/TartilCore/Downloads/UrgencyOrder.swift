/// The scheduler's jobs in the order they are to be started: most urgent first (the lowest priority number), then
/// in the order they were submitted. Kept as jobs come and go, so that finding the next job to start does not sort
/// every job again: a whole-Qur'an prefetch has 6,236 jobs and decides what to start about twice per file, and
/// sorting them every time was the download thread's largest cost after receiving (perf).
///
/// A job that ends stays in the list as a place marked over until the front passes it (the front is where jobs
/// mostly end) or until such places are half the list, when they are dropped all at once; both are amortised
/// constant time per job.
///
/// ```swift
/// var order = UrgencyOrder()
/// order.insert(DownloadScheduler.JobID(1), priority: 5, order: 0)
/// order.insert(DownloadScheduler.JobID(2), priority: 0, order: 1)
/// Array(order.ids)   // [2, 1]: the more urgent first
/// ```
struct UrgencyOrder: Sendable, Hashable {
    /// One job's place: its sort key and whether it is over.
    struct Place: Sendable, Hashable {
        let priority: Int
        let order: Int
        let id: DownloadScheduler.JobID
        var isOver = false

        /// Whether this place comes before a job of `priority` submitted `order`th.
        func precedes(priority otherPriority: Int, order otherOrder: Int) -> Bool {
            priority != otherPriority ? priority < otherPriority : order < otherOrder
        }
    }

    /// The places from `front` on are the list; those before it are all over (dropped in bulk now and then).
    private(set) var places: [Place] = []
    private var front = 0
    /// Places from `front` on marked over.
    private var overPlaces = 0

    /// The jobs not over, most urgent first.
    var ids: some Sequence<DownloadScheduler.JobID> {
        places[front...].lazy.filter { !$0.isOver }.map(\.id)
    }

    /// How many jobs are not over.
    var count: Int { places.count - front - overPlaces }

    /// Adds a job submitted `order`th (orders never repeat) with `priority`.
    mutating func insert(_ id: DownloadScheduler.JobID, priority: Int, order: Int) {
        // Jobs are mostly submitted in order at one priority: they go at the end.
        if let last = places.last, !last.precedes(priority: priority, order: order) {
            places.insert(Place(priority: priority, order: order, id: id), at: firstIndex(after: priority, order: order))
        } else {
            places.append(Place(priority: priority, order: order, id: id))
        }
    }

    /// Marks the job of `priority` submitted `order`th as over.
    mutating func remove(priority: Int, order: Int) {
        let index = firstIndex(after: priority, order: order) - 1
        guard index >= front, places[index].priority == priority, places[index].order == order, !places[index].isOver else {
            preconditionFailure("UrgencyOrder: no job of priority \(priority) submitted \(order)th")
        }
        places[index].isOver = true
        overPlaces += 1
        while front < places.count, places[front].isOver {
            front += 1
            overPlaces -= 1
        }
        if front > 64, front * 2 > places.count {
            places.removeFirst(front)
            front = 0
        }
        if overPlaces > 64, overPlaces * 2 > places.count - front {
            places.removeSubrange(..<front)
            places.removeAll(where: \.isOver)
            front = 0
            overPlaces = 0
        }
    }

    /// Equal when the same jobs are in the same order (however many places over each still keeps).
    static func == (left: UrgencyOrder, right: UrgencyOrder) -> Bool {
        left.places[left.front...].filter { !$0.isOver } == right.places[right.front...].filter { !$0.isOver }
    }

    func hash(into hasher: inout Hasher) {
        for place in places[front...] where !place.isOver { hasher.combine(place) }
    }

    /// The index of the first place after (priority, order) in the sort, from `front` on.
    private func firstIndex(after priority: Int, order: Int) -> Int {
        var low = front
        var high = places.count
        while low < high {
            let middle = (low + high) / 2
            let place = places[middle]
            if place.precedes(priority: priority, order: order) || (place.priority == priority && place.order == order) {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }
}
