/// The price table a workspace's calls are priced with: the bundled prices, with the file
/// `offpeak.yaml` names (`prices:`) over them. `costs` prices the batch lane's usage again at live
/// prices with it, to say what the lane saved.
///
/// The same table `WorkspaceContext` loads; read here because reports sit below the workspace layer.
enum WorkspacePrices {
    /// - Throws: a configuration error (78) for an unreadable `offpeak.yaml` or price file.
    static func load(_ workspace: Workspace) throws(OffpeakError) -> PriceTable {
        let config = try WorkspaceConfigParser.load(workspace: workspace.root)
        guard let path = config.pricesPath else { return .bundled }
        return PriceTable.bundled.merging(
            try PriceTable.load(
                file: workspace.url(for: path), shownAs: path, configuredAt: config.pricesLocation))
    }
}
