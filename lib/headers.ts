// Response headers as the gateway writes them (node's writeHead takes numbers as well as strings).
// Ground floor: the stream floor decides the x-service-* headers of an answer, the http floor sends them.
export type Headers = Record<string, string | number>;
